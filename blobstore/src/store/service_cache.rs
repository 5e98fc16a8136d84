//! A read-through cache of the per-account service properties documents.
//!
//! The server consults the document on every cross-origin request (its CORS
//! rules) and on every GET and HEAD (whether to answer `Vary: Origin`), so a
//! database round trip each time would tax the hot path. The cache is
//! filled on a miss and replaced by the store's own write, after the write
//! commits: a Set is seen by the very next request. A generation counter
//! keeps a reader that read the database before a concurrent write from
//! putting the old document back.
//!
//! In cluster mode another node may write the document at any moment, so
//! the cache is keyed by the document's version instead
//! ([`ServiceCache::at_version`]): a read of a blob returns the version in
//! its own snapshot, and the cached document answers only when it is that
//! version (`docs/cluster.md`, "Round trips").

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::meta::ServiceVersion;

/// Documents by account; `None` caches "never set".
#[derive(Debug, Default)]
pub(crate) struct ServiceCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    generation: u64,
    documents: HashMap<String, Option<Arc<str>>>,
    /// Cluster mode: the newest document read of each account, with its
    /// version.
    versioned: HashMap<String, (ServiceVersion, Option<Arc<str>>)>,
}

/// What a lookup found: the cached document, or a miss to fill with
/// [`ServiceCache::fill`] once the database has answered.
pub(crate) enum Lookup {
    Hit(Option<Arc<str>>),
    Miss { generation: u64 },
}

impl ServiceCache {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn lookup(&self, account: &str) -> Lookup {
        let state = self.state();
        match state.documents.get(account) {
            Some(doc) => Lookup::Hit(doc.clone()),
            None => Lookup::Miss {
                generation: state.generation,
            },
        }
    }

    /// Caches what the database answered, unless a write came in between
    /// the miss and now.
    pub(crate) fn fill(&self, account: &str, generation: u64, doc: Option<Arc<str>>) {
        let mut state = self.state();
        if state.generation == generation {
            state.documents.insert(account.to_owned(), doc);
        }
    }

    /// Records a committed write.
    pub(crate) fn replace(&self, account: &str, doc: Arc<str>) {
        let mut state = self.state();
        state.generation += 1;
        state.documents.insert(account.to_owned(), Some(doc));
    }

    /// The document of `account` at `version`, when that is the one cached.
    pub(crate) fn at_version(
        &self,
        account: &str,
        version: ServiceVersion,
    ) -> Option<Option<Arc<str>>> {
        match self.state().versioned.get(account) {
            Some((v, doc)) if *v == version => Some(doc.clone()),
            _ => None,
        }
    }

    /// Keeps `doc`, read at `version`, unless a newer one is cached
    /// (versions only grow; never set is the oldest).
    pub(crate) fn keep_version(
        &self,
        account: &str,
        version: ServiceVersion,
        doc: Option<Arc<str>>,
    ) {
        let mut state = self.state();
        match state.versioned.get(account) {
            Some((v, _)) if *v > version => {}
            _ => {
                state.versioned.insert(account.to_owned(), (version, doc));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(cache: &ServiceCache, account: &str) -> Option<Option<String>> {
        match cache.lookup(account) {
            Lookup::Hit(d) => Some(d.map(|d| d.to_string())),
            Lookup::Miss { .. } => None,
        }
    }

    #[test]
    fn a_fill_after_a_write_does_not_bring_back_the_old_document() {
        let cache = ServiceCache::default();
        let Lookup::Miss { generation } = cache.lookup("a") else {
            panic!("empty cache hit");
        };
        // A write commits while the reader still holds the old answer.
        cache.replace("a", Arc::from("new"));
        cache.fill("a", generation, Some(Arc::from("old")));
        assert_eq!(hit(&cache, "a"), Some(Some("new".into())));
    }

    #[test]
    fn a_versioned_document_answers_only_at_its_version() {
        let cache = ServiceCache::default();
        assert_eq!(cache.at_version("a", None), None, "nothing cached");
        cache.keep_version("a", None, None);
        assert_eq!(cache.at_version("a", None), Some(None));
        assert_eq!(cache.at_version("a", Some(1)), None, "set since");
        cache.keep_version("a", Some(2), Some(Arc::from("two")));
        // A slower reader of an older version does not bring it back.
        cache.keep_version("a", Some(1), Some(Arc::from("one")));
        assert_eq!(cache.at_version("a", Some(1)), None);
        assert_eq!(
            cache
                .at_version("a", Some(2))
                .map(|d| d.map(|d| d.to_string())),
            Some(Some("two".into()))
        );
        assert_eq!(cache.at_version("b", Some(2)), None, "per account");
    }

    #[test]
    fn a_fill_caches_absence_and_presence_per_account() {
        let cache = ServiceCache::default();
        for (account, doc) in [("a", None), ("b", Some("doc"))] {
            let Lookup::Miss { generation } = cache.lookup(account) else {
                panic!("empty cache hit");
            };
            cache.fill(account, generation, doc.map(Arc::from));
        }
        assert_eq!(hit(&cache, "a"), Some(None));
        assert_eq!(hit(&cache, "b"), Some(Some("doc".into())));
        assert_eq!(hit(&cache, "c"), None);
    }
}
