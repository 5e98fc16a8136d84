// What every JS test shares: the endpoint of the server under test (set by
// tests/js/run), the development account's credential, and client options.

import { StorageSharedKeyCredential } from "@azure/storage-blob";

export const ACCOUNT = "devstoreaccount1";
export const KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** Path-style blob endpoint, e.g. http://127.0.0.1:10000/devstoreaccount1. */
export const endpoint = (() => {
  const value = process.env.STOWAGE_BLOB_ENDPOINT;
  if (!value) {
    throw new Error("STOWAGE_BLOB_ENDPOINT is not set: run the suite with tests/js/run");
  }
  return value.replace(/\/+$/, "");
})();

export const credential = new StorageSharedKeyCredential(ACCOUNT, KEY);

/** No retries (a retry would hide the answer under test), bounded waits. */
export const options = {
  retryOptions: { maxTries: 1, tryTimeoutInMs: 60_000 },
};
