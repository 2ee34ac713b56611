"""The conversion cache: where an entry lives and its key, computed without pyarrow (key);
the entries themselves, Arrow IPC files memory-mapped (store); the file sink they are
written through (file_sink)."""
