//! `Flows` for [`FaultyStore`](super::FaultyStore). Dependency reads and cuts pass straight
//! through.

use flexiq_core::store::{Dependencies, DependenciesRequest, Flows, RemoveChildDependencyRequest};
use flexiq_core::Result;

use super::FaultyStore;

#[async_trait::async_trait]
impl Flows for FaultyStore {
    async fn get_dependencies(&self, req: DependenciesRequest) -> Result<Dependencies> {
        self.inner.get_dependencies(req).await
    }

    async fn remove_child_dependency(&self, req: RemoveChildDependencyRequest) -> Result<bool> {
        self.inner.remove_child_dependency(req).await
    }
}
