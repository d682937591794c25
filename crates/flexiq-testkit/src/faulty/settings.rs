//! `Settings` for [`FaultyStore`](super::FaultyStore). Deployment-wide settings pass straight
//! through.

use std::collections::BTreeMap;

use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest, Settings};
use flexiq_core::Result;

use super::FaultyStore;

#[async_trait::async_trait]
impl Settings for FaultyStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        self.inner.get_setting(key).await
    }

    async fn set_setting(&self, req: SetSettingRequest) -> Result<()> {
        self.inner.set_setting(req).await
    }

    async fn set_setting_if(&self, req: SetSettingIfRequest) -> Result<bool> {
        self.inner.set_setting_if(req).await
    }

    async fn delete_setting(&self, key: &str) -> Result<bool> {
        self.inner.delete_setting(key).await
    }

    async fn list_settings(&self) -> Result<BTreeMap<String, String>> {
        self.inner.list_settings().await
    }
}
