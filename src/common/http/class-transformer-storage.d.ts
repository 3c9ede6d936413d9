// class-transformer's own metadata (its @Type and @Transform decorators), which it keeps in a module it
// types under types/ but ships under cjs/: read by accepted-body.ts.
declare module 'class-transformer/cjs/storage' {
  export const defaultMetadataStorage: import('class-transformer/types/MetadataStorage').MetadataStorage;
}
