//! Recency order of the chunks held in memory.

use std::collections::{BTreeMap, HashMap};

#[derive(Default, Debug)]
pub(crate) struct Lru {
    /// Rises with each use; `front` falls with each chunk put back as the
    /// oldest, so the two never meet and never wrap.
    tick: i64,
    front: i64,
    by_tick: BTreeMap<i64, String>,
    ticks: HashMap<String, i64>,
}

impl Lru {
    /// Marks `key` as the most recently used.
    pub fn touch(&mut self, key: &str) {
        self.tick += 1;
        if let Some(old) = self.ticks.insert(key.to_string(), self.tick) {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(self.tick, key.to_string());
    }

    pub fn remove(&mut self, key: &str) {
        if let Some(t) = self.ticks.remove(key) {
            self.by_tick.remove(&t);
        }
    }

    /// Removes and returns the least recently used key.
    pub fn pop_oldest(&mut self) -> Option<String> {
        let (_, key) = self.by_tick.pop_first()?;
        self.ticks.remove(&key);
        Some(key)
    }

    /// Puts `key` back as the least recently used (after a failed spill).
    pub fn push_oldest(&mut self, key: &str) {
        self.front -= 1;
        let t = self.front;
        if let Some(old) = self.ticks.insert(key.to_string(), t) {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(t, key.to_string());
    }

    pub fn len(&self) -> usize {
        self.ticks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn evicts_in_order_of_last_use() {
        let mut l = Lru::default();
        for k in ["a", "b", "c"] {
            l.touch(k);
        }
        l.touch("a");
        assert_eq!(l.pop_oldest().as_deref(), Some("b"));
        l.push_oldest("b");
        assert_eq!(l.pop_oldest().as_deref(), Some("b"));
        l.remove("c");
        assert_eq!(l.pop_oldest().as_deref(), Some("a"));
        assert_eq!(l.pop_oldest(), None);
        assert_eq!(l.len(), 0);
    }

    #[test]
    fn keys_put_back_on_an_empty_order_stay_oldest_first() {
        // Two failed spills in a row on an empty order once underflowed.
        let mut l = Lru::default();
        l.push_oldest("a");
        l.push_oldest("b");
        l.touch("c");
        assert_eq!(l.pop_oldest().as_deref(), Some("b"));
        assert_eq!(l.pop_oldest().as_deref(), Some("a"));
        assert_eq!(l.pop_oldest().as_deref(), Some("c"));
    }
}
