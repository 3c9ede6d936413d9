// The job kinds (docs/api-decisions.md §4): each has its own path, scope, output options and price.
// Its own file so that job.types.ts and output-options.ts can both name them without importing each other.
export const JOB_APIS = ['sdr2hdr', 'audio'] as const;
export type JobApi = (typeof JOB_APIS)[number];
