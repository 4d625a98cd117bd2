//! The names in scope while a body is lowered.

use super::rename::Binding;
use std::collections::HashMap;

/// One map per block, innermost last, and for each name the depths of the
/// blocks that bind it: a lookup costs the same at any depth of nesting
/// (walking the blocks outwards made a 10,000-deep `else if` chain
/// quadratic).
pub(crate) struct Scopes {
    frames: Vec<HashMap<String, Binding>>,
    binders: HashMap<String, Vec<usize>>,
}

impl Scopes {
    pub fn new() -> Scopes {
        Scopes {
            frames: vec![HashMap::new()],
            binders: HashMap::new(),
        }
    }

    pub fn push(&mut self) {
        self.frames.push(HashMap::new());
    }

    pub fn pop(&mut self) {
        if let Some(frame) = self.frames.pop() {
            for name in frame.keys() {
                if let Some(depths) = self.binders.get_mut(name) {
                    depths.pop();
                }
            }
        }
    }

    /// Binds `name` in the innermost block.
    pub fn insert(&mut self, name: String, binding: Binding) {
        let depth = self.frames.len() - 1;
        let frame = self.frames.last_mut().expect("a scope");
        if frame.insert(name.clone(), binding).is_none() {
            self.binders.entry(name).or_default().push(depth);
        }
    }

    pub fn get(&self, name: &str) -> Option<&Binding> {
        let depth = *self.binders.get(name)?.last()?;
        self.frames[depth].get(name)
    }

    /// The blocks, innermost first, to change a binding in place.
    pub fn frames_mut(&mut self) -> impl Iterator<Item = &mut HashMap<String, Binding>> {
        self.frames.iter_mut().rev()
    }
}
