// The repository's rules, applied to the bench from here (the root config leaves bench/ out).
import root from '../eslint.config.js';

export default [{ ignores: ['node_modules/', 'results/'] }, ...root];
