//! Numbers and dates of other libraries, read as the plain Python values
//! they stand for, so that records and parameters taken from a DataFrame's
//! rows or a database driver read as the same values written by hand.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyFloat;

/// The plain Python value `obj` stands for, or `None` when it is none of
/// these:
///
/// - a numpy scalar (`numpy.int64`, `numpy.float32`, `numpy.bool_`, ...):
///   its `.item()`, the int, float or bool of the same value;
/// - a `numpy.datetime64`: its ISO text (`2024-03-01`,
///   `2024-03-01T10:00:00.123456789`), and `NaT` as the text `NaT`, which
///   a date field refuses by name;
/// - a `decimal.Decimal`: an integral one as its int, another as the
///   float whose shortest text is the same number (`Decimal("0.000001")` is
///   `1e-06`); one with more digits than a float holds is a `TypeError`,
///   never a rounded number.
pub fn plain<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let kind = obj.get_type();
    let module = kind.module()?;
    let name = kind.name()?;
    match (module.to_cow()?.as_ref(), name.to_cow()?.as_ref()) {
        ("numpy", "datetime64") => Ok(Some(obj.str()?.into_any())),
        ("numpy", _) if obj.hasattr("item")? => {
            let item = obj.call_method0("item")?;
            let still_numpy = item.get_type().module()?.to_cow()? == "numpy";
            Ok((!still_numpy).then_some(item))
        }
        ("decimal", "Decimal") => decimal(obj).map(Some),
        _ => Ok(None),
    }
}

/// A `Decimal` as an int or the float of the same decimal number (see
/// [`plain`]); NaN and the infinities become their floats, which the
/// readers refuse as not finite.
fn decimal<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let finite: bool = obj.call_method0("is_finite")?.extract()?;
    if finite && obj.eq(obj.call_method0("to_integral_value")?)? {
        return obj.call_method0("__int__");
    }
    let float: f64 = obj.call_method0("__float__")?.extract()?;
    let float = PyFloat::new(obj.py(), float);
    if !finite {
        return Ok(float.into_any());
    }
    let same = obj.get_type().call1((float.repr()?,))?.eq(obj)?;
    if !same {
        return Err(PyTypeError::new_err(format!(
            "Decimal {} has more digits than a float holds exactly; give it as a string",
            obj.str()?
        )));
    }
    Ok(float.into_any())
}
