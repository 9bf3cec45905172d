//! Small things every other crate uses and none should pull in analysis
//! for: [`quantity`] (durations, rates and their readable forms, as users
//! write them), [`rng`] (the seeded generator that makes think times, data
//! choices and the testbed's dataset repeat) and [`civil`] (calendar dates
//! as the seconds since the epoch that HTTP and access logs write), and
//! [`secret`] (a URL's password kept out of what is written down).

pub mod civil;
pub mod quantity;
pub mod rng;
pub mod secret;
