"""The ground floor: the exception root, the settings and the proof input types. Imports nothing of ours."""
