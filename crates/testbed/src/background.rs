//! A throwaway testbed: size S on SQLite in a directory of its own, served
//! on 127.0.0.1 by its own runtime on a background thread, with the
//! journey and the class (`testbed plan --class`) for it written beside
//! the database (`headroom demo` searches its capacity in the class's
//! students). Dropping the [`BackgroundTestbed`] stops the server and
//! removes the directory.

use crate::db::{Create, Database, Durability};
use crate::generate::{self, DatasetMeta, InitOptions};
use crate::plan::{PlanIds, PlanOptions};
use crate::site::{Site, SiteConfig};
use crate::store::{CacheSpec, SessionSpec};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// A testbed served until dropped.
pub struct BackgroundTestbed {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The journey for this testbed's data.
    pub plan: PathBuf,
    /// The class for this testbed's data (`class.yaml`, mixing its reader
    /// and poster journeys).
    pub class: PathBuf,
    dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for BackgroundTestbed {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Creates the dataset in `dir` (emptied first), serves it and writes its
/// journey.
pub async fn start(dir: PathBuf) -> Result<BackgroundTestbed, String> {
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let db_url = format!("sqlite:{}", dir.join("lms.db").display());
    let (meta, ids) = create_dataset(&db_url, &dir).await?;
    let config = SiteConfig {
        db_url,
        sessions: SessionSpec::Db,
        cache: CacheSpec::Local,
        workers: None,
        node: "demo".into(),
        db_connections: 10,
    };
    let (stop, stop_rx) = oneshot::channel::<()>();
    let (address, thread) = serve_in_background(config, stop_rx)?;
    let url = format!("http://{address}");
    let plan = dir.join("journey.yaml");
    let options = PlanOptions {
        base_url: url.clone(),
        users: None,
        loops: None,
        ramp_up_s: None,
    };
    std::fs::write(&plan, crate::plan::render(&meta, &ids, &options))
        .map_err(|e| format!("{}: {e}", plan.display()))?;
    let class_dir = dir.join("class");
    let class = crate::class::files(&meta, &ids, &url).map_err(|e| e.to_string())?;
    crate::class::write(&class_dir, &class).map_err(|e| e.to_string())?;
    Ok(BackgroundTestbed {
        url,
        plan,
        class: class_dir.join("class.yaml"),
        dir,
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// The size S dataset in a new SQLite database; what its journey needs.
async fn create_dataset(db_url: &str, dir: &Path) -> Result<(DatasetMeta, PlanIds), String> {
    let db = Database::connect(db_url, Create::IfMissing, Durability::Full, 2)
        .await
        .map_err(|e| e.to_string())?;
    let options = InitOptions {
        size: crate::Size::S,
        seed: 1,
        data_dir: dir.join("files"),
        force: true,
    };
    generate::init(&db, &options)
        .await
        .map_err(|e| e.to_string())?;
    let meta = generate::meta(&db).await.map_err(|e| e.to_string())?;
    let ids = crate::plan::ids(&db).await.map_err(|e| e.to_string())?;
    db.close().await;
    Ok((meta, ids))
}

/// The site served on 127.0.0.1 by a runtime of two workers on its own
/// thread until `stop` fires; returns once it listens.
fn serve_in_background(
    config: SiteConfig,
    stop: oneshot::Receiver<()>,
) -> Result<(SocketAddr, JoinHandle<()>), String> {
    let (ready_tx, ready_rx) = mpsc::channel::<Result<SocketAddr, String>>();
    let thread = std::thread::Builder::new()
        .name("headroom-demo-testbed".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            runtime.block_on(serve(config, ready_tx, stop));
        })
        .map_err(|e| e.to_string())?;
    let address = ready_rx
        .recv()
        .map_err(|_| "the testbed thread ended before it listened".to_string())??;
    Ok((address, thread))
}

async fn serve(
    config: SiteConfig,
    ready: mpsc::Sender<Result<SocketAddr, String>>,
    stop: oneshot::Receiver<()>,
) {
    let site = match Site::open(&config).await {
        Ok(site) => site,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let listener = match crate::server::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let _ = ready.send(listener.local_addr().map_err(|e| e.to_string()));
    let _ = crate::server::serve(site.clone(), listener, async move {
        let _ = stop.await;
    })
    .await;
    site.db.close().await;
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    #[tokio::test]
    async fn a_background_testbed_serves_its_journey_until_dropped() {
        let dir = std::env::temp_dir().join(format!("headroom-background-{}", std::process::id()));
        let testbed = super::start(dir.clone()).await.unwrap();
        let journey = std::fs::read_to_string(&testbed.plan).unwrap();
        assert!(journey.contains(&testbed.url), "{journey}");
        let address = testbed.url.trim_start_matches("http://").to_string();
        let page = tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: demo\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut page = String::new();
            stream.read_to_string(&mut page).unwrap();
            page
        })
        .await
        .unwrap();
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        drop(testbed);
        assert!(!dir.exists(), "the directory goes with the testbed");
    }
}
