// Blob Batch through the JavaScript SDK's BlobBatchClient, at account and
// container scope, with Shared Key and with SAS. On a path-style URL the SDK
// sends the account-level batch as
// `POST /devstoreaccount1?comp=batch&restype=container` (no container).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";

import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobServiceClient,
  ContainerClient,
  ContainerSASPermissions,
  generateAccountSASQueryParameters,
  generateBlobSASQueryParameters,
} from "@azure/storage-blob";

import { ACCOUNT, credential, endpoint, options } from "./support.mjs";

const NAMES = ["a.txt", "dir/b.txt", "name with spaces"];

function hoursFromNow(n) {
  return new Date(Date.now() + n * 3600 * 1000);
}

async function fill(container, names = NAMES) {
  for (const name of names) {
    await container.getBlockBlobClient(name).upload(name, name.length);
  }
}

async function remaining(container) {
  const names = [];
  for await (const blob of container.listBlobsFlat()) {
    names.push(blob.name);
  }
  return names.sort();
}

function assertAllAccepted(result, count) {
  assert.equal(result._response.status, 202);
  assert.equal(result.subResponsesSucceededCount, count);
  assert.equal(result.subResponsesFailedCount, 0);
  assert.deepEqual(
    result.subResponses.map((r) => r.status),
    Array(count).fill(202),
  );
}

describe("Blob Batch", () => {
  const service = new BlobServiceClient(endpoint, credential, options);
  let container;

  before(async () => {
    container = service.getContainerClient(`js-batch-${randomUUID().slice(0, 12)}`);
    await container.create();
  });

  after(async () => {
    await container.deleteIfExists();
  });

  test("account scope with Shared Key", async () => {
    await fill(container);
    const urls = NAMES.map((n) => container.getBlobClient(n).url);
    const result = await service.getBlobBatchClient().deleteBlobs(urls, credential);
    assertAllAccepted(result, NAMES.length);
    assert.deepEqual(await remaining(container), []);
  });

  test("container scope with Shared Key, a missing blob failing alone", async () => {
    await fill(container);
    const clients = [...NAMES, "missing"].map((n) => container.getBlobClient(n));
    const result = await container.getBlobBatchClient().deleteBlobs(clients);
    assert.equal(result._response.status, 202);
    assert.equal(result.subResponsesSucceededCount, NAMES.length);
    assert.equal(result.subResponsesFailedCount, 1);
    const failed = result.subResponses[NAMES.length];
    assert.equal(failed.status, 404);
    assert.equal(failed.errorCode, "BlobNotFound");
    assert.deepEqual(await remaining(container), []);
  });

  test("account scope with an account SAS", async () => {
    await fill(container);
    const sas = generateAccountSASQueryParameters(
      {
        expiresOn: hoursFromNow(1),
        permissions: AccountSASPermissions.parse("rdl"),
        resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
        services: AccountSASServices.parse("b").toString(),
      },
      credential,
    ).toString();
    const sasService = new BlobServiceClient(`${endpoint}?${sas}`, undefined, options);
    const sasContainer = sasService.getContainerClient(container.containerName);
    const clients = NAMES.map((n) => sasContainer.getBlobClient(n));
    const result = await sasService.getBlobBatchClient().deleteBlobs(clients);
    assertAllAccepted(result, NAMES.length);
    assert.deepEqual(await remaining(container), []);
  });

  test("container scope with a container SAS", async () => {
    await fill(container);
    const sas = generateBlobSASQueryParameters(
      {
        containerName: container.containerName,
        expiresOn: hoursFromNow(1),
        permissions: ContainerSASPermissions.parse("rdl"),
      },
      credential,
    ).toString();
    const sasContainer = new ContainerClient(`${container.url}?${sas}`, undefined, options);
    const clients = NAMES.map((n) => sasContainer.getBlobClient(n));
    const result = await sasContainer.getBlobBatchClient().deleteBlobs(clients);
    assertAllAccepted(result, NAMES.length);
    assert.deepEqual(await remaining(container), []);
  });

  test("a container SAS without delete refuses each part", async () => {
    await fill(container, ["kept"]);
    const sas = generateBlobSASQueryParameters(
      {
        containerName: container.containerName,
        expiresOn: hoursFromNow(1),
        permissions: ContainerSASPermissions.parse("rl"),
      },
      credential,
    ).toString();
    const sasContainer = new ContainerClient(`${container.url}?${sas}`, undefined, options);
    const result = await sasContainer
      .getBlobBatchClient()
      .deleteBlobs([sasContainer.getBlobClient("kept")]);
    assert.equal(result._response.status, 202);
    assert.equal(result.subResponsesFailedCount, 1);
    assert.equal(result.subResponses[0].status, 403);
    assert.equal(result.subResponses[0].errorCode, "AuthorizationPermissionMismatch");
    assert.deepEqual(await remaining(container), ["kept"]);
    await container.getBlobClient("kept").delete();
  });

  test("the account is the one the endpoint names", () => {
    assert.equal(service.accountName, ACCOUNT);
  });
});
