// The chaos suite kills processes and breaks dependencies on purpose, so what the APIs answer mid-outage is
// reported at the end of the run (test/support/openapi-validation.ts) rather than failing the experiment.
process.env.OPENAPI_VALIDATION ??= 'report';
