/** The webview's side of the message pipe to the extension host. */

import type { ViewMessage } from '../shared/messages';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api: VsCodeApi =
  typeof acquireVsCodeApi === 'function'
    ? acquireVsCodeApi()
    : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };

export function post(message: ViewMessage): void {
  api.postMessage(message);
}

/** Figures the end-to-end benchmarks read (`window.__waveMetrics`). */
export interface Metrics {
  atToPaint: number[];
  transcriptRender: { items: number; ms: number }[];
}

export const metrics: Metrics = { atToPaint: [], transcriptRender: [] };
(window as unknown as { __waveMetrics: Metrics }).__waveMetrics = metrics;
