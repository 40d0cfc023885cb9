// Computes 3D-view data uploads off the main thread (see upload.ts) and transfers the
// finished arrays back without copying them.

import { computeUpload, transferables, type UploadRequest } from "./upload";

self.onmessage = (e: MessageEvent<UploadRequest>) => {
  const r = computeUpload(e.data);
  (self as unknown as Worker).postMessage(r, transferables(r));
};
