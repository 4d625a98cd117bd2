//! Test and example host for the gradmacro workspace; it has no API of its own.
