//! Links the addon against the Node-API symbols the host process provides.

fn main() {
    napi_build::setup();
}
