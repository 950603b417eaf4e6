//! Derivatives of canonical forms with respect to a variable, by the chain rule through
//! kernels (`d/dx e^s = e^s s'`, `d/dx b^r = r b^r b'/b`, `d/dx log b = b'/b`); a kernel
//! that mentions the variable in any other way (`erf(x)`, `a[x]`, `x ** x` is fine but
//! `floor(x)` is not) has no derivative here. The basis of [`crate::ode::operator`].
