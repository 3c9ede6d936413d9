// The workers' pixel budget (WORKER_MAX_PIXELS, docs/api-decisions.md §10): a video frame with more pixels fails
// as out_of_memory. One rule for every place that judges it: the worker before it fetches an item
// (src/processing/item-input.ts), the worker's probe of what it downloaded (probe.ts), and the estimate,
// which tells the verdict before a submit (src/jobs/media-rules.ts).

export interface PixelBudgetProblem {
  code: 'out_of_memory';
  message: string;
  details: { width: number; height: number; max_pixels: number };
}

export function pixelBudgetProblem(
  width: number | null | undefined,
  height: number | null | undefined,
  maxPixels: number,
): PixelBudgetProblem | null {
  if (!width || !height || width * height <= maxPixels) return null;
  return {
    code: 'out_of_memory',
    message: `The video is ${width}×${height}; the workers accept at most ${maxPixels} pixels per frame. Send a smaller picture.`,
    details: { width, height, max_pixels: maxPixels },
  };
}
