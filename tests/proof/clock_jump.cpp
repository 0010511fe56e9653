// Issue 8: an LD_PRELOAD library that moves the wall clock. Written next.
