// The 3D view's worker: computes data uploads (upload.ts) and lasso membership
// (render/lasso.ts) off the main thread and transfers the results back without copying.

import { lassoRows, polygonMask } from "../render/lasso";
import type { UploadProtocol } from "./protocol";
import { serve, transfer, type Port } from "./proxy";
import { computeUpload, transferables } from "./upload";

serve<UploadProtocol>(self as unknown as Port, {
  upload: (req) => {
    const r = computeUpload(req);
    return transfer(r, transferables(r));
  },
  lasso: (req) => {
    const t0 = performance.now();
    const rows = lassoRows(req, polygonMask(req.polygon, req.width, req.height));
    const res = { rows, positions: req.positions, flags: req.flags, ms: performance.now() - t0 };
    return transfer(res, [rows.buffer, req.positions.buffer, req.flags.buffer]);
  },
});
