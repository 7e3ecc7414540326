//! Random choices for the property tests that generate programs: read one
//! at a time from proptest's numbers, 0 always the simplest choice, so
//! that proptest shrinks a failing program toward a small one.

pub struct Choices {
    values: Vec<u32>,
    next: usize,
}

#[allow(dead_code)] // Not every test uses every kind of choice.
impl Choices {
    pub fn new(values: Vec<u32>) -> Choices {
        Choices { values, next: 0 }
    }

    /// A number below `n`.
    pub fn pick(&mut self, n: usize) -> usize {
        let v = self.values.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        v as usize % n.max(1)
    }

    pub fn chance(&mut self) -> bool {
        self.pick(2) == 1
    }

    /// A float literal in [-2, 2) with two decimals.
    pub fn float(&mut self) -> String {
        let k = self.pick(400) as f64 / 100.0 - 2.0;
        format!("{k:.2}")
    }
}
