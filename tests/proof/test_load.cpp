// Issue 8: proof under load and faults (load). Written next.
