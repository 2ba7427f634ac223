//! Integration tests: one binary, modules by concern.
mod calibration;
