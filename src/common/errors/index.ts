export * from './catalogue';
export * from './api-error';
