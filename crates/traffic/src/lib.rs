//! headroom's traffic: the users an access log shows, learned as a model
//! of sessions and pages ([`traffic`]), and a log replayed as it was
//! logged ([`replay`]).

pub mod replay;
pub mod traffic;
pub mod workload_text;
