// Jest runs only the smoke suites of this folder (the rest of __test__ is Vitest's).
module.exports = {
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.jest.cjs', '<rootDir>/*.jest.mjs'],
  testEnvironment: 'node',
  transform: {},
}
