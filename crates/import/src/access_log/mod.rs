//! A web server's access log, read: [`format`] compiles the line format
//! (nginx `log_format` syntax, `combined`, `common`) and reads a line's
//! fields, [`time`] the times logs write, [`read`] the files (gzip,
//! several in time order, bad lines counted with their place).

pub mod format;
pub mod read;
pub mod time;
