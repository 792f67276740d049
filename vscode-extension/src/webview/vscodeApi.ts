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
  /** `@` typed -> the dropdown painted (the last answer for that query, or the new one). */
  atToPaint: number[];
  /** `@` typed -> the server's answer to this keystroke painted. */
  atToLivePaint: number[];
  /** The completion request as the extension host timed it (host <-> wave-ls). */
  atServer: number[];
  transcriptRender: { items: number; ms: number }[];
}

export const metrics: Metrics = { atToPaint: [], atToLivePaint: [], atServer: [], transcriptRender: [] };
(window as unknown as { __waveMetrics: Metrics }).__waveMetrics = metrics;
