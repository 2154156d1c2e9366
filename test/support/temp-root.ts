/** Runs before each test file: its temp dirs, and those of every process it starts, go under the run's root. */
import { inject } from 'vitest';

process.env.TMPDIR = inject('tempRoot');
