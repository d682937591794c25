//! One module per page (or group of small pages).

pub mod admin;
pub mod dead;
pub mod jobs;
pub mod login;
pub mod overview;
pub mod queues;
pub mod webhooks;
