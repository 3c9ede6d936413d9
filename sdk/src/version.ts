// Kept equal to package.json's version (a test checks it), so the User-Agent needs no file read at run time.
export const VERSION = '0.1.0';
