//! `if`, loops and exits in the forward sweep, with the control-flow records
//! the reverse sweep replays: branch taken, iteration count, left early.

use super::Frame;
use crate::emit::operands::mentions;
use crate::emit::records::Keep;
use crate::emit::{Emitter, Pushes};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    fn with_exit_flag(
        &mut self,
        site: SiteId,
        frames: &mut Vec<Frame>,
        body: impl FnOnce(&mut Self, &mut Vec<Frame>) -> TokenStream,
    ) -> TokenStream {
        let flagged = self.rec.exit.contains_key(&site);
        if flagged {
            frames.push(Frame::Flag(site));
        }
        let tokens = body(self, frames);
        if !flagged {
            return tokens;
        }
        frames.pop();
        let slot = self.rec.exit[&site].clone();
        let i = &slot.ident;
        match slot.store {
            Keep::Tape => {
                self.note_push(i);
                quote!(#tokens #i.push(false);)
            }
            _ => tokens,
        }
    }

    pub(super) fn fwd_if(&mut self, i: &If, frames: &mut Vec<Frame>) -> TokenStream {
        self.with_exit_flag(i.site, frames, |e, frames| {
            e.branch_depth += 1;
            let then = e.fwd_block(&i.then, frames);
            let els = e.fwd_block(&i.els, frames);
            e.branch_depth -= 1;
            let cond = e.passive(&i.cond);
            let els = if els.is_empty() {
                quote!()
            } else {
                quote!(else { #els })
            };
            let Some(slot) = e.rec.branch.get(&i.site) else {
                if then.is_empty() && els.is_empty() {
                    if crate::analysis::evaluated(e.f, &i.cond.reads, &e.a.live) {
                        return quote!(let _ = #cond;);
                    }
                    return quote!();
                }
                return quote!(if #cond { #then } #els);
            };
            let flag = &slot.ident;
            match slot.store {
                Keep::Top => quote!(let #flag = #cond; if #flag { #then } #els),
                Keep::Once => quote!(#flag = #cond; if #flag { #then } #els),
                Keep::Tape => {
                    let local = e.names.fresh("took");
                    let flag = flag.clone();
                    e.note_push(&flag);
                    quote!(let #local = #cond; #flag.push(#local); if #local { #then } #els)
                }
            }
        })
    }

    pub(super) fn fwd_loop(&mut self, l: &Loop, frames: &mut Vec<Frame>) -> TokenStream {
        self.with_exit_flag(l.site, frames, |e, frames| {
            frames.push(Frame::Loop(l.site));
            e.pushed.push(Pushes {
                branch_depth: e.branch_depth,
                counted: matches!(
                    &l.kind,
                    LoopKind::For {
                        reversed: Some(_),
                        ..
                    }
                ),
                children: l
                    .body
                    .stmts
                    .iter()
                    .filter_map(|s| match s {
                        Stmt::Loop(inner) => Some(inner.site),
                        _ => None,
                    })
                    .collect(),
                depth: l.ctx.loop_depth,
                binding: match &l.kind {
                    LoopKind::For { binding, .. } => *binding,
                    _ => None,
                },
                ..Pushes::default()
            });
            let mut body = e.fwd_block(&l.body, frames);
            let mut prelude = quote!();
            if e.fused == Some(l.id) {
                body.extend(e.fused_body.take());
                prelude.extend(e.fused_prelude.take());
            }
            let pushes = e.pushed.pop().unwrap_or_default();
            frames.pop();
            let reserve = e.reserve(l, pushes);
            let slot = e.rec.count.get(&l.site).cloned();
            let (before, tick, after) = match &slot {
                None => (quote!(), quote!(), quote!()),
                Some(s) => {
                    let i = &s.ident;
                    match (s.store, &s.counter) {
                        (Keep::Tape, Some(c)) if s.typed => (
                            quote!(let mut #c = 0usize;),
                            quote!(#c += 1;),
                            quote!(#i.push(#c);),
                        ),
                        (Keep::Tape, Some(c)) => (
                            quote!(let mut #c = 0;),
                            quote!(#c += 1;),
                            quote!(#i.push(#c);),
                        ),
                        (Keep::Top, _) if s.typed => {
                            (quote!(let mut #i = 0usize;), quote!(#i += 1;), quote!())
                        }
                        (Keep::Top, _) => (quote!(let mut #i = 0;), quote!(#i += 1;), quote!()),
                        _ => (quote!(), quote!(#i += 1;), quote!()),
                    }
                }
            };
            let header = match &l.kind {
                LoopKind::For { binding, iter, .. } => {
                    let iter = e.passive(iter);
                    match binding {
                        Some(v) if e.a.hoisted[v.0] => {
                            let var = e.f.var(*v).ident.clone();
                            let fresh = e.names.fresh(&format!("{var}_next"));
                            let key = l.id;
                            let save = if e.a.saves(e.f, *v, Write::Def) {
                                let tape = e.value_tape(*v);
                                let _ = key;
                                quote!(#tape.push(#var);)
                            } else {
                                quote!()
                            };
                            return quote! {
                                #reserve #before
                                for #fresh in #iter { #tick #save #var = #fresh; #body }
                                #after
                            };
                        }
                        Some(v) if e.live(*v) && mentions(&body, &e.f.var(*v).ident) => {
                            let var = e.f.var(*v).ident.clone();
                            quote!(for #var in #iter)
                        }
                        _ => quote!(for _ in #iter),
                    }
                }
                LoopKind::While { cond } => {
                    let c = e.passive(cond);
                    quote!(while #c)
                }
                LoopKind::Infinite => quote!(loop),
            };
            if body.is_empty() && slot.is_none() {
                let evaluated = match &l.kind {
                    LoopKind::For { iter, .. } => Some(iter),
                    LoopKind::While { cond } => Some(cond),
                    LoopKind::Infinite => None,
                };
                if let Some(h) = evaluated {
                    if !crate::analysis::evaluated(e.f, &h.reads, &e.a.live) {
                        return prelude;
                    }
                    let h = e.passive(h);
                    return quote!(#prelude let _ = #h;);
                }
            }
            quote!(#prelude #reserve #before #header { #tick #body } #after)
        })
    }

    pub(super) fn fwd_exit(&mut self, exit: Exit, frames: &[Frame]) -> TokenStream {
        let mut actions = TokenStream::new();
        for frame in frames.iter().rev() {
            match frame {
                Frame::Loop(_) if exit != Exit::Return => break,
                Frame::Loop(site) => {
                    if let Some(s) = self.rec.count.get(site) {
                        if let (Keep::Tape, Some(c)) = (s.store, &s.counter) {
                            let i = &s.ident;
                            actions.extend(quote!(#i.push(#c);));
                        }
                    }
                }
                Frame::Flag(site) => {
                    let s = &self.rec.exit[site];
                    let i = &s.ident;
                    actions.extend(match s.store {
                        Keep::Tape => quote!(#i.push(true);),
                        _ => quote!(#i = true;),
                    });
                }
            }
        }
        let label = self.label.clone();
        let jump = match exit {
            Exit::Break => quote!(break;),
            Exit::Continue => quote!(continue;),
            Exit::Return => quote!(break #label;),
        };
        quote!(#actions #jump)
    }
}

/// Whether `tokens` are a bare range (`a..b`), which needs parentheses to take
/// a method call.
pub(super) fn is_range(tokens: &TokenStream) -> bool {
    let tts: Vec<proc_macro2::TokenTree> = tokens.clone().into_iter().collect();
    tts.windows(2).any(|w| match (&w[0], &w[1]) {
        (proc_macro2::TokenTree::Punct(a), proc_macro2::TokenTree::Punct(b)) => {
            a.as_char() == '.' && b.as_char() == '.'
        }
        _ => false,
    })
}
