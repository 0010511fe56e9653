// Issue 8: proof under load and faults (crash). Written next.
