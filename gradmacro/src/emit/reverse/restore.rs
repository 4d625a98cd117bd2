//! Records as the reverse sweep reads them back: old values, branches taken,
//! iteration counts, early exits. That sweep is emitted first, so each record
//! (and its tape) is named here on first use, and the forward sweep fills it.

use crate::emit::records::{Keep, Slot, WriteKey};
use crate::emit::Emitter;
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// Puts back the value a write destroyed.
    pub(super) fn restore(&mut self, v: VarId, key: WriteKey, ctx: Ctx) -> TokenStream {
        let var = self.f.var(v).ident.clone();
        let old = self.restore_value(v, key, ctx);
        quote!(#var = #old;)
    }

    /// The saved value (or element) that a write of `v` destroyed.
    pub(super) fn restore_value(&mut self, v: VarId, key: WriteKey, ctx: Ctx) -> TokenStream {
        match Keep::of(ctx) {
            Keep::Tape => {
                let tape = self.value_tape(v);
                match self.rec.stack.get(&v) {
                    Some((_, len)) => quote!({ #len -= 1; #tape[#len] }),
                    None => quote!(#tape.pop().unwrap()),
                }
            }
            store => {
                let slot = self.save_slot(v, key, store, false);
                quote!(#slot)
            }
        }
    }

    pub(crate) fn value_tape(&mut self, v: VarId) -> proc_macro2::Ident {
        if let Some(t) = self.rec.tapes.get(&v) {
            return t.clone();
        }
        let t = self.names.fresh(&format!("tape_{}", self.f.var(v).ident));
        self.rec.tapes.insert(v, t.clone());
        if let Some(&cap) = self.stack_caps.get(&v) {
            let len = self.names.fresh(&format!("{t}_len"));
            self.rec.stack.insert(v, (cap, len));
        }
        t
    }

    /// Pushes `value` onto `v`'s value tape.
    pub(crate) fn push_value(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let tape = self.value_tape(v);
        match self.rec.stack.get(&v) {
            Some((_, len)) => quote!(#tape[#len] = #value; #len += 1;),
            None => {
                self.note_push(&tape);
                quote!(#tape.push(#value);)
            }
        }
    }

    pub(super) fn save_slot(
        &mut self,
        v: VarId,
        key: WriteKey,
        store: Keep,
        whole: bool,
    ) -> proc_macro2::Ident {
        if let Some((s, _, _)) = self.rec.saves.get(&key) {
            return s.ident.clone();
        }
        let ident = self.names.fresh(&format!("{}_old", self.f.var(v).ident));
        self.rec.saves.insert(
            key,
            (
                Slot {
                    ident: ident.clone(),
                    store,
                    counter: None,
                    typed: true,
                },
                v,
                whole,
            ),
        );
        ident
    }

    /// The tape of whole arrays that re-creating `v` in a loop moves onto.
    pub(crate) fn array_tape(&mut self, v: VarId) -> proc_macro2::Ident {
        if let Some(t) = self.rec.array_tapes.get(&v) {
            return t.clone();
        }
        let t = self
            .names
            .fresh(&format!("tape_{}_arrays", self.f.var(v).ident));
        self.rec.array_tapes.insert(v, t.clone());
        t
    }

    fn slot(&mut self, kind: &str, site: SiteId, ctx: Ctx) -> Slot {
        let store = Keep::of(ctx);
        let base = format!("{kind}{}", site.0 + 1);
        let ident = match store {
            Keep::Tape => self.names.fresh(&format!("tape_{base}")),
            _ => self.names.fresh(&base),
        };
        let counter = (kind == "iters" && store == Keep::Tape).then(|| self.names.fresh(&base));
        Slot {
            ident,
            store,
            counter,
            typed: true,
        }
    }

    fn read_slot(slot: &Slot) -> TokenStream {
        let i = &slot.ident;
        match slot.store {
            Keep::Tape => quote!(#i.pop().unwrap()),
            _ => quote!(#i),
        }
    }

    pub(super) fn branch_test(&mut self, site: SiteId, ctx: Ctx) -> TokenStream {
        let slot = self.slot("took", site, ctx);
        let t = Self::read_slot(&slot);
        self.rec.branch.insert(site, slot);
        t
    }

    /// A loop count; untyped where it must unify with a replayed binding's type.
    pub(super) fn count_read(&mut self, site: SiteId, ctx: Ctx, typed: bool) -> TokenStream {
        let mut slot = self.slot("iters", site, ctx);
        slot.typed = typed;
        let t = Self::read_slot(&slot);
        self.rec.count.insert(site, slot);
        t
    }

    pub(super) fn exit_test(&mut self, site: SiteId, ctx: Ctx) -> TokenStream {
        let slot = self.slot("left", site, ctx);
        let t = Self::read_slot(&slot);
        self.rec.exit.insert(site, slot);
        t
    }
}
