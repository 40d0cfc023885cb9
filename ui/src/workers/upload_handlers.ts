// What the 3D view's worker answers: data uploads (upload.ts) and lasso membership
// (render/lasso.ts), with their result buffers transferred back rather than copied.

import { lassoRows, polygonMask } from "../render/lasso";
import type { UploadProtocol } from "./protocol";
import { transfer, type Handlers } from "./proxy";
import { computeUpload, transferables } from "./upload";

export const uploadHandlers: Handlers<UploadProtocol> = {
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
};
