// Append Blob Seal through the JavaScript SDK, with the expectations the
// SDK's own live tests hold against the service: a sealed blob reports
// isSealed true (in its properties and its listing), an open one reports
// nothing (undefined, not false), and a copy keeps the source's seal
// unless sealBlob says otherwise.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { BlobServiceClient } from "@azure/storage-blob";

import { credential, endpoint, options } from "./support.mjs";

describe("Append Blob Seal", () => {
  const service = new BlobServiceClient(endpoint, credential, options);
  let container;

  before(async () => {
    container = service.getContainerClient(`js-seal-${randomUUID().slice(0, 12)}`);
    await container.create();
  });

  after(async () => {
    await container.deleteIfExists();
  });

  test("seal, then copies with and without sealBlob", async () => {
    const source = container.getAppendBlobClient("source");
    await source.create();
    const appended = await source.appendBlock("abc", 3);
    assert.equal((await source.getProperties()).isSealed, undefined);

    const sealed = await source.seal();
    assert.equal(sealed._response.status, 200);
    assert.equal(sealed.isSealed, true);
    assert.notEqual(sealed.etag, appended.etag);
    assert.equal((await source.getProperties()).isSealed, true);
    await assert.rejects(source.appendBlock("more", 4), (e) => {
      assert.equal(e.statusCode, 409);
      assert.equal(e.details.errorCode, "BlobIsSealed");
      return true;
    });

    const cases = [
      ["opened", { sealBlob: false }, undefined],
      ["kept", {}, true],
      ["sealed", { sealBlob: true }, true],
    ];
    for (const [name, copyOptions, want] of cases) {
      const dest = container.getAppendBlobClient(name);
      await (await dest.beginCopyFromURL(source.url, copyOptions)).pollUntilDone();
      assert.equal((await dest.getProperties()).isSealed, want, name);
    }

    const listed = {};
    for await (const blob of container.listBlobsFlat()) {
      listed[blob.name] = blob.properties.isSealed;
    }
    assert.deepEqual(listed, { kept: true, opened: undefined, sealed: true, source: true });
  });
});
