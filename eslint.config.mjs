// Lint rules (docs/development.md): promises are awaited or handled, switches are exhaustive, === only.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', 'sdk/**', 'coverage/**', 'scripts/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  // Tests and benchmarks read arbitrary JSON bodies.
  { files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
