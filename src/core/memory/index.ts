/** Durable memory (ECA docs/config/memory.md): where it lives, its files, the index, the guidance. */
export { canonicalProject, memoryDirs, memoryRoot, projectSlug, type MemoryDir, type MemoryTier } from './dirs.js';
export { memoryContentError, parseMemory, scanDir, scanDirs, type MemoryEntry, type SkippedMemory } from './files.js';
export { memoryIndex, type MemoryIndex, type MemoryIndexItem } from './index-text.js';
export { GUIDANCE_HEADING, memoryGuidance } from './guidance.js';
export { CONSOLIDATE_PROMPT, consolidateSnapshot } from './consolidate.js';
export { memorySettings, type MemorySettings, type WriteMode } from './settings.js';
export { inMemoryDir, memoryWriteRefusal } from './write-check.js';
export { rankEntries, score, withUsage, HALF_LIFE_DAYS, type RankedEntry } from './rank.js';
export { bodyChanges, isLedgerPath, mergeBodyChanges, usageFile, UsageLedger, withRead, USAGE_FILE, type Ledger, type UsageRecord } from './usage.js';
