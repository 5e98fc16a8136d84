//! Uploads: one Put Blob for small bodies, parallel Put Block calls and one
//! Put Block List for large ones (docs/wire/blobs.md#put-blob, B12–B14).
//!
//! A reader is consumed block by block: at most `concurrency` blocks are in
//! memory and in flight at once, so a body of any size is uploaded with
//! bounded memory. Block ids carry a random per-upload prefix, so two
//! uploads racing on one name never commit each other's blocks.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest, Md5};
use reqwest::Method;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinSet;

use crate::container::WriteInfo;
use crate::properties::header_u64;
use crate::service::transport;
use crate::xml::{self, escape_text};
use crate::{BlobClient, Conditions, ContentProperties, Error, LeaseId, Metadata, Result};

/// The most blocks a committed block blob can have (docs/wire/requests.md#limits).
const MAX_BLOCKS: usize = 50_000;

/// How a blob is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadOptions {
    /// Content properties stored with the blob.
    pub content: ContentProperties,
    /// Metadata stored with the blob (replaces any existing).
    pub metadata: Metadata,
    /// Conditions on the write (e.g. create-only) and the lease id.
    pub conditions: Conditions,
    /// Size of each block when the body is uploaded in blocks.
    pub block_size: usize,
    /// Bodies up to this size go in one Put Blob.
    pub single_put_limit: usize,
    /// Blocks uploaded at the same time.
    pub concurrency: usize,
    /// Send `Content-MD5` with each body so the service rejects bytes
    /// damaged in transit (`400 Md5Mismatch`).
    pub transactional_md5: bool,
    /// Index tags stored with the blob (`x-ms-tags`); none replaces any
    /// existing ones with none.
    pub tags: crate::Tags,
}

impl Default for UploadOptions {
    fn default() -> UploadOptions {
        UploadOptions {
            content: ContentProperties::default(),
            metadata: Metadata::new(),
            conditions: Conditions::new(),
            block_size: 4 * 1024 * 1024,
            single_put_limit: 8 * 1024 * 1024,
            concurrency: 4,
            transactional_md5: true,
            tags: crate::Tags::new(),
        }
    }
}

impl UploadOptions {
    fn tags_header(&self) -> Option<String> {
        (!self.tags.is_empty()).then(|| self.tags.header_value())
    }

    /// Content properties.
    pub fn with_content(mut self, content: ContentProperties) -> UploadOptions {
        self.content = content;
        self
    }

    /// Metadata.
    pub fn with_metadata(mut self, metadata: Metadata) -> UploadOptions {
        self.metadata = metadata;
        self
    }

    /// Index tags.
    pub fn with_tags(mut self, tags: crate::Tags) -> UploadOptions {
        self.tags = tags;
        self
    }

    /// Conditions and lease id.
    pub fn with_conditions(mut self, conditions: Conditions) -> UploadOptions {
        self.conditions = conditions;
        self
    }

    /// Block size (at least 1 byte).
    pub fn with_block_size(mut self, n: usize) -> UploadOptions {
        self.block_size = n.max(1);
        self
    }

    /// Largest body sent in one Put Blob.
    pub fn with_single_put_limit(mut self, n: usize) -> UploadOptions {
        self.single_put_limit = n;
        self
    }

    /// Blocks in flight at once (at least 1).
    pub fn with_concurrency(mut self, n: usize) -> UploadOptions {
        self.concurrency = n.max(1);
        self
    }

    /// Whether to send transactional MD5s.
    pub fn with_transactional_md5(mut self, on: bool) -> UploadOptions {
        self.transactional_md5 = on;
        self
    }
}

/// Which blocks Get Block List reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockListType {
    /// The committed list.
    #[default]
    Committed,
    /// Staged blocks not yet committed.
    Uncommitted,
    /// Both.
    All,
}

/// One block of a block list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The base64 block id as staged.
    pub id: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The answer to Get Block List.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockList {
    /// Committed blocks, in order.
    pub committed: Vec<Block>,
    /// Uncommitted blocks.
    pub uncommitted: Vec<Block>,
}

fn md5_base64(data: &[u8]) -> String {
    STANDARD.encode(Md5::digest(data))
}

impl BlobClient {
    /// Uploads `data` as a block blob: one Put Blob up to
    /// `single_put_limit`, else blocks.
    ///
    /// # Errors
    /// `409 BlobAlreadyExists` with [`Conditions::with_if_not_exists`],
    /// `412` for other failed conditions, lease errors.
    pub async fn upload(
        &self,
        data: impl Into<Bytes>,
        options: &UploadOptions,
    ) -> Result<WriteInfo> {
        let data = data.into();
        if data.len() <= options.single_put_limit {
            return self.put_blob(data, options).await;
        }
        let slices = data
            .chunks(options.block_size.max(1))
            .map(|c| data.slice_ref(c))
            .collect::<Vec<_>>();
        let mut chunks: Chunks<'_, tokio::io::Empty> = Chunks::Slices(slices.into_iter());
        self.upload_blocks(options, &mut chunks).await
    }

    /// Uploads everything `reader` yields, in blocks once it passes
    /// `single_put_limit`; memory stays within about
    /// `max(single_put_limit, block_size · concurrency)`.
    ///
    /// # Errors
    /// As [`BlobClient::upload`], plus [`Error::Io`] from the reader.
    pub async fn upload_reader<R>(
        &self,
        mut reader: R,
        options: &UploadOptions,
    ) -> Result<WriteInfo>
    where
        R: AsyncRead + Unpin + Send,
    {
        let first = read_up_to(&mut reader, options.single_put_limit.saturating_add(1)).await?;
        if first.len() <= options.single_put_limit {
            return self.put_blob(first, options).await;
        }
        let mut chunks = Chunks::Reader {
            pending: first,
            reader: &mut reader,
            block_size: options.block_size.max(1),
        };
        self.upload_blocks(options, &mut chunks).await
    }

    /// Uploads the file at `path` (see [`BlobClient::upload_reader`]).
    ///
    /// # Errors
    /// As [`BlobClient::upload_reader`].
    pub async fn upload_file(
        &self,
        path: impl AsRef<Path>,
        options: &UploadOptions,
    ) -> Result<WriteInfo> {
        let file = tokio::fs::File::open(path).await?;
        self.upload_reader(file, options).await
    }

    /// One Put Blob of a block blob.
    ///
    /// # Errors
    /// As [`BlobClient::upload`]; `413 RequestBodyTooLarge` past the
    /// service's limit.
    pub async fn put_blob(&self, data: Bytes, options: &UploadOptions) -> Result<WriteInfo> {
        let mut request = self
            .base_request(Method::PUT)
            .header("x-ms-blob-type", "BlockBlob");
        if options.transactional_md5 {
            request = request.header("content-md5", md5_base64(&data));
        }
        let request = options
            .metadata
            .apply(options.content.apply(options.conditions.apply(request)))
            .header_opt("x-ms-tags", options.tags_header())
            .body(data);
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Put Block: stages `data` under the base64 `block_id`.
    ///
    /// # Errors
    /// `400 InvalidBlobOrBlock` for an id of another length than the blob's
    /// other blocks; `409 InvalidBlobType`; lease errors.
    pub async fn put_block(
        &self,
        block_id: &str,
        data: Bytes,
        lease_id: Option<LeaseId>,
        transactional_md5: bool,
    ) -> Result<()> {
        let mut request = self
            .base_request(Method::PUT)
            .query("comp", "block")
            .query("blockid", block_id)
            .header_opt("x-ms-lease-id", lease_id.map(|l| l.to_string()));
        if transactional_md5 {
            request = request.header("content-md5", md5_base64(&data));
        }
        self.pipeline.send(request.body(data)).await?;
        Ok(())
    }

    /// Put Block List: commits `block_ids` (each as `Latest`) in order, with
    /// the content properties, metadata and conditions of `options`.
    ///
    /// # Errors
    /// `400 InvalidBlockList` for an unknown id; `409 BlobAlreadyExists`,
    /// `412`, lease errors.
    pub async fn put_block_list(
        &self,
        block_ids: &[String],
        options: &UploadOptions,
    ) -> Result<WriteInfo> {
        let mut body = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
        for id in block_ids {
            body.push_str("<Latest>");
            body.push_str(&escape_text(id));
            body.push_str("</Latest>");
        }
        body.push_str("</BlockList>");
        let request = self
            .base_request(Method::PUT)
            .query("comp", "blocklist")
            .header("content-type", "application/xml");
        let request = options
            .metadata
            .apply(options.content.apply(options.conditions.apply(request)))
            .header_opt("x-ms-tags", options.tags_header())
            .body(Bytes::from(body));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Get Block List.
    ///
    /// # Errors
    /// `404 BlobNotFound`, `409 InvalidBlobType`.
    pub async fn block_list(&self, list: BlockListType) -> Result<BlockList> {
        let value = match list {
            BlockListType::Committed => "committed",
            BlockListType::Uncommitted => "uncommitted",
            BlockListType::All => "all",
        };
        let request = self
            .request(Method::GET)
            .query("comp", "blocklist")
            .query("blocklisttype", value);
        let response = self.pipeline.send(request).await?;
        let _length = header_u64(response.headers(), "x-ms-blob-content-length");
        let text = response.text().await.map_err(transport)?;
        let root = xml::parse(&text)?;
        let blocks = |name: &str| -> Vec<Block> {
            root.child(name)
                .map(|list| {
                    list.children
                        .iter()
                        .filter(|b| b.name == "Block")
                        .map(|b| Block {
                            id: b.text_of("Name").unwrap_or_default().to_owned(),
                            size: b
                                .text_of("Size")
                                .and_then(|s| s.trim().parse().ok())
                                .unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(BlockList {
            committed: blocks("CommittedBlocks"),
            uncommitted: blocks("UncommittedBlocks"),
        })
    }

    /// Stages every chunk `next_chunk` yields as a block (at most
    /// `concurrency` at once), then commits them in order. The whole blob's
    /// MD5 is stored unless the caller gave one.
    async fn upload_blocks<R>(
        &self,
        options: &UploadOptions,
        chunks: &mut Chunks<'_, R>,
    ) -> Result<WriteInfo>
    where
        R: AsyncRead + Unpin + Send,
    {
        let prefix = &uuid::Uuid::new_v4().simple().to_string()[..16];
        let lease = options.conditions.lease_id;
        let md5_each = options.transactional_md5;
        let mut whole = Md5::new();
        let mut ids: Vec<String> = Vec::new();
        let mut tasks: JoinSet<Result<()>> = JoinSet::new();
        loop {
            let Some(chunk) = chunks.next().await? else {
                break;
            };
            whole.update(&chunk);
            if ids.len() == MAX_BLOCKS {
                return Err(Error::InvalidInput(format!(
                    "more than {MAX_BLOCKS} blocks: use a larger block size"
                )));
            }
            let id = STANDARD.encode(format!("{prefix}{:08}", ids.len()));
            ids.push(id.clone());
            let client = self.clone();
            tasks.spawn(async move { client.put_block(&id, chunk, lease, md5_each).await });
            while tasks.len() >= options.concurrency.max(1) {
                join_one(&mut tasks).await?;
            }
        }
        while !tasks.is_empty() {
            join_one(&mut tasks).await?;
        }
        let mut commit = options.clone();
        if commit.content.content_md5.is_none() {
            commit.content.content_md5 = Some(whole.finalize().to_vec());
        }
        self.put_block_list(&ids, &commit).await
    }
}

/// Where the blocks of an upload come from.
enum Chunks<'a, R> {
    /// A body already in memory, cut into blocks.
    Slices(std::vec::IntoIter<Bytes>),
    /// A reader; `pending` holds bytes read ahead but not yet sent.
    Reader {
        pending: Bytes,
        reader: &'a mut R,
        block_size: usize,
    },
}

impl<R: AsyncRead + Unpin + Send> Chunks<'_, R> {
    /// The next block, `None` at the end.
    async fn next(&mut self) -> Result<Option<Bytes>> {
        match self {
            Chunks::Slices(slices) => Ok(slices.next()),
            Chunks::Reader {
                pending,
                reader,
                block_size,
            } => {
                if pending.len() >= *block_size {
                    return Ok(Some(pending.split_to(*block_size)));
                }
                let mut buf = std::mem::take(pending).to_vec();
                let more = read_up_to(&mut **reader, *block_size - buf.len()).await?;
                buf.extend_from_slice(&more);
                Ok((!buf.is_empty()).then(|| Bytes::from(buf)))
            }
        }
    }
}

async fn join_one(tasks: &mut JoinSet<Result<()>>) -> Result<()> {
    match tasks.join_next().await {
        Some(Ok(result)) => result,
        Some(Err(join)) => Err(Error::Io(std::io::Error::other(join))),
        None => Ok(()),
    }
}

/// Reads until `limit` bytes or the end of `reader`.
async fn read_up_to<R: AsyncRead + Unpin + ?Sized>(reader: &mut R, limit: usize) -> Result<Bytes> {
    let mut buf = Vec::with_capacity(limit.min(8 * 1024 * 1024));
    let mut taken = (&mut *reader).take(limit as u64);
    taken.read_to_end(&mut buf).await?;
    Ok(Bytes::from(buf))
}
