// The method maps of the UI's two workers, for WorkerProxy and serve (proxy.ts).

import type { LassoRequest, LassoResult } from "../render/lasso";
import type { Method } from "./proxy";
import type { UploadRequest, UploadResult } from "./upload";

/// The 3D view's worker: data uploads and lasso membership.
export type UploadProtocol = {
  upload: Method<UploadRequest, UploadResult>;
  lasso: Method<LassoRequest, LassoResult>;
};

/// The bubble graph's nodes and weighted edges, as columns.
export interface GraphLayoutRequest {
  ids: Int32Array<ArrayBuffer>;
  radii: Float32Array<ArrayBuffer>;
  /// Starting positions (x/y pairs): where nodes already were, or scattered.
  xy: Float32Array<ArrayBuffer>;
  src: Int32Array<ArrayBuffer>;
  dst: Int32Array<ArrayBuffer>;
  score: Float32Array<ArrayBuffer>;
}

/// Positions (x/y pairs, in the request's node order) after a batch of ticks.
export interface GraphTick {
  xy: Float32Array<ArrayBuffer>;
  ticks: number;
}

export interface GraphLayoutDone {
  ticks: number;
  /// A later layout request stopped this one before it cooled.
  superseded: boolean;
}

/// The bubble graph's worker: a force layout that sends positions as it runs.
export type GraphProtocol = {
  layout: Method<GraphLayoutRequest, GraphLayoutDone, GraphTick>;
};
