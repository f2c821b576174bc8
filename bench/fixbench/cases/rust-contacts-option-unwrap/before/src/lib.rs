//! Reads the old CRM's CSV export into contacts and groups them by company domain.

pub mod contact;
pub mod csv;
pub mod domains;
