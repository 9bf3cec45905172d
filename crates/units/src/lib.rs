//! Two small things every other crate uses and none should pull in
//! analysis for: [`quantity`] (durations, rates and their readable forms,
//! as users write them) and [`rng`] (the seeded generator that makes think
//! times, data choices and the testbed's dataset repeat).

pub mod quantity;
pub mod rng;
