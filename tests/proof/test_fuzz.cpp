// Issue 8: proof under load and faults (fuzz). Written next.
