// The 3D view's worker (see upload_handlers.ts).

import type { UploadProtocol } from "./protocol";
import { serve, type Port } from "./proxy";
import { uploadHandlers } from "./upload_handlers";

serve<UploadProtocol>(self as unknown as Port, uploadHandlers);
