//! The dashboard's integration tests: the API suite on every store, auth, the OpenAPI
//! document, and the pages driven in headless Chromium.

mod api;
mod auth;
mod browser;
mod fixture;
mod openapi;
mod pages;
mod webhook_forms;
mod webhooks;
