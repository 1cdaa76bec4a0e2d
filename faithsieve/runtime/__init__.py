"""Process plumbing with no mathematics in it: killable workers, lazy imports, the key-value store,
atomic writes, text files and URLs. Imports only ``faithsieve.core``."""
