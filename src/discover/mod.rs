//! Log-dir discovery: finds every capture below a path and names runs and hosts the way
//! XProf and torch-tb-profiler do.
