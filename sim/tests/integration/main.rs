//! Integration tests: real simulator servers over loopback, one binary, modules by concern.

mod auth;
mod calibration;
mod clients;
mod endpoints;
mod faults;
mod gathering;
mod load;
mod sessions;
mod support;
mod timings;
