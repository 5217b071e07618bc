//! Ids written end to end in one text: one allocation for millions of ids.

/// Ids in one text, each found by its place: an id costs its bytes and a
/// 4-byte end. They take at most 4 GiB together (the ends are `u32`
/// offsets).
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedIds {
    text: String,
    /// Where each id ends in `text`; it starts where the one before it
    /// ends (the first at 0).
    ends: Vec<u32>,
}

impl PackedIds {
    /// How many ids there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The id at `place`, which must be below the count.
    #[inline]
    pub(crate) fn get(&self, place: usize) -> &str {
        let start = if place == 0 { 0 } else { self.ends[place - 1] };
        &self.text[start as usize..self.ends[place] as usize]
    }

    /// Adds an id after the others.
    #[inline]
    pub(crate) fn push(&mut self, id: &str) {
        self.text.push_str(id);
        self.ends.push(end_at(self.text.len()));
    }

    /// Makes room for `count` more ids, when the allocator has it (the
    /// text grows on its own, see [`PackedIds::reserve_text`]).
    pub(crate) fn try_reserve(&mut self, count: usize) -> bool {
        self.ends.try_reserve(count).is_ok()
    }

    /// Makes room for `count` more ids of `bytes` bytes together, or for
    /// `room_bytes` when the text must grow and that is more: a caller
    /// that knows how many ids will come grows the text once, not at each
    /// doubling.
    pub(crate) fn reserve(&mut self, count: usize, bytes: usize, room_bytes: usize) {
        self.ends.reserve(count);
        if self.text.capacity() - self.text.len() < bytes {
            self.text.reserve(bytes.max(room_bytes));
        }
    }

    /// How many bytes of ids the text has room for.
    #[cfg(test)]
    pub(crate) fn text_capacity(&self) -> usize {
        self.text.capacity()
    }

    /// Keeps the ids at the places `keep` accepts, in order.
    pub(crate) fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        let mut kept = PackedIds {
            text: String::with_capacity(self.text.len()),
            ends: Vec::with_capacity(self.ends.len()),
        };
        for place in (0..self.len()).filter(|&place| keep(place)) {
            kept.push(self.get(place));
        }
        *self = kept;
    }
}

/// The end of an id at `len` bytes into the text.
fn end_at(len: usize) -> u32 {
    u32::try_from(len).expect("a ledger's invoice ids take at most 4 GiB together")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_by_place_and_kept_in_order() {
        let mut ids = PackedIds::default();
        for id in ["a", "bcd", "", "ef"] {
            ids.push(id);
        }
        let all: Vec<&str> = (0..ids.len()).map(|place| ids.get(place)).collect();
        assert_eq!(all, ["a", "bcd", "", "ef"]);
        ids.retain(|place| place != 1);
        let kept: Vec<&str> = (0..ids.len()).map(|place| ids.get(place)).collect();
        assert_eq!(kept, ["a", "", "ef"]);
        ids.reserve(2, 10, 100);
        assert!(ids.text.capacity() >= 103 && ids.ends.capacity() >= 5);
    }
}
