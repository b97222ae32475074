//! `hopsim._native.TableWriter`: Parquet files written from NumPy columns, in Rust.
//!
//! Why here and not pyarrow: loading pyarrow, its Parquet writer and its cast kernels costs about
//! 55 MB of resident memory, more than the core's run and the scenario together on the standard
//! benchmark, and `hopsim run` needs none of it to write a run folder (issue 14). The files read
//! back with pyarrow (and DuckDB) as the same tables `pq.write_table` gave: every column optional
//! (Arrow's fields are nullable), unsigned integers with Parquet's unsigned INTEGER logical type
//! (so `uint16` reads back as `uint16`), text as STRING, zstd pages.
//!
//! A column crosses as `(dtype, data, mask, dictionary)`: the NumPy dtype string (`"<u2"`,
//! `"|b1"`, ..., or `"str"`), the column's bytes (a 1-D contiguous `uint8` view), a `uint8` view of
//! a null mask (non-zero = null) or `None`, and for text the dictionary (`list[str]`) whose `<i4`
//! indices `data` holds. Each `write` is one row group, so a spooled table streams a batch at a time.

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, FloatType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::Type;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

/// The column types a table may hold, by NumPy dtype string (`str`: dictionary-coded text).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Bool,
    Str,
}

const KINDS: [(&str, Kind); 12] = [
    ("|u1", Kind::U8),
    ("<u2", Kind::U16),
    ("<u4", Kind::U32),
    ("<u8", Kind::U64),
    ("|i1", Kind::I8),
    ("<i2", Kind::I16),
    ("<i4", Kind::I32),
    ("<i8", Kind::I64),
    ("<f4", Kind::F32),
    ("<f8", Kind::F64),
    ("|b1", Kind::Bool),
    ("str", Kind::Str),
];

impl Kind {
    fn parse(column: &str, dtype: &str) -> PyResult<Kind> {
        KINDS.iter().find(|(n, _)| *n == dtype).map(|(_, k)| *k).ok_or_else(|| {
            let allowed: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!("column {column:?}: dtype {dtype:?} is not one of {}", allowed.join(", ")))
        })
    }

    /// Bytes per value in `data` (text: its `<i4` dictionary indices).
    fn width(self) -> usize {
        match self {
            Kind::U8 | Kind::I8 | Kind::Bool => 1,
            Kind::U16 | Kind::I16 => 2,
            Kind::U32 | Kind::I32 | Kind::F32 | Kind::Str => 4,
            Kind::U64 | Kind::I64 | Kind::F64 => 8,
        }
    }

    /// The Parquet column of this kind, as pyarrow writes the Arrow type: 8/16/32-bit integers in
    /// INT32 and 64-bit in INT64 with their INTEGER logical type (unsigned values stored as the
    /// same bits, as the format specifies), text as BYTE_ARRAY annotated STRING.
    fn parquet_type(self, name: &str) -> Result<Type, ParquetError> {
        let (physical, logical) = match self {
            Kind::U8 => (Physical::INT32, Some(LogicalType::integer(8, false))),
            Kind::U16 => (Physical::INT32, Some(LogicalType::integer(16, false))),
            Kind::U32 => (Physical::INT32, Some(LogicalType::integer(32, false))),
            Kind::U64 => (Physical::INT64, Some(LogicalType::integer(64, false))),
            Kind::I8 => (Physical::INT32, Some(LogicalType::integer(8, true))),
            Kind::I16 => (Physical::INT32, Some(LogicalType::integer(16, true))),
            Kind::I32 => (Physical::INT32, None),
            Kind::I64 => (Physical::INT64, None),
            Kind::F32 => (Physical::FLOAT, None),
            Kind::F64 => (Physical::DOUBLE, None),
            Kind::Bool => (Physical::BOOLEAN, None),
            Kind::Str => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Type::primitive_type_builder(name, physical).with_repetition(Repetition::OPTIONAL).with_logical_type(logical).build()
    }
}

fn parquet_err(path: &str, e: ParquetError) -> PyErr {
    PyOSError::new_err(format!("{path}: writing Parquet failed ({e})"))
}

/// Writes one Parquet file, a row group per `write`; `close` writes the footer (a file never
/// closed is not readable, which is what a run folder's temporary write wants on failure).
#[pyclass(module = "hopsim._native")]
pub struct TableWriter {
    path: String,
    columns: Vec<(String, Kind)>,
    writer: Option<SerializedFileWriter<BufWriter<File>>>,
}

#[pymethods]
impl TableWriter {
    /// `schema`: `[(column name, dtype string), ...]` in file order.
    #[new]
    fn new(path: &str, schema: Vec<(String, String)>) -> PyResult<Self> {
        let columns = schema.into_iter().map(|(n, d)| Kind::parse(&n, &d).map(|k| (n, k))).collect::<PyResult<Vec<_>>>()?;
        let fields = columns
            .iter()
            .map(|(n, k)| k.parquet_type(n).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("{path}: bad schema ({e})")))?;
        let root = Type::group_type_builder("schema").with_fields(fields).build().map_err(|e| parquet_err(path, e))?;
        // pyarrow's default codec level for zstd is also 1
        let props = WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default())).build();
        let file = File::create(path).map_err(|e| PyOSError::new_err(format!("{path}: cannot create it ({e})")))?;
        let writer = SerializedFileWriter::new(BufWriter::new(file), Arc::new(root), Arc::new(props)).map_err(|e| parquet_err(path, e))?;
        Ok(TableWriter { path: path.to_string(), columns, writer: Some(writer) })
    }

    /// Append one row group: `columns` in schema order, each `(dtype, data, mask, dictionary)`
    /// (see the module's doc). No rows: nothing is written (the footer alone holds the schema).
    fn write(&mut self, py: Python<'_>, columns: Vec<(String, Bound<'_, PyAny>, Option<Bound<'_, PyAny>>, Option<Vec<String>>)>) -> PyResult<()> {
        if columns.len() != self.columns.len() {
            return Err(PyValueError::new_err(format!("{}: {} columns given, the schema has {}", self.path, columns.len(), self.columns.len())));
        }
        let mut cols = Vec::with_capacity(columns.len());
        for ((name, kind), (dtype, data, mask, dict)) in self.columns.iter().zip(&columns) {
            if Kind::parse(name, dtype)? != *kind {
                let want = KINDS.iter().find(|(_, k)| k == kind).map_or("?", |(n, _)| n);
                return Err(PyValueError::new_err(format!("column {name:?}: dtype {dtype:?}, the table's schema has {want:?}")));
            }
            if (*kind == Kind::Str) != dict.is_some() {
                return Err(PyValueError::new_err(format!("column {name:?}: a dictionary goes with text columns only")));
            }
            cols.push((name.as_str(), *kind, bytes(py, name, data)?, mask.as_ref().map(|m| bytes(py, name, m)).transpose()?, dict.as_deref()));
        }
        let rows = cols.first().map_or(0, |(_, k, d, _, _)| d.item_count() / k.width());
        for (name, kind, data, mask, _) in &cols {
            let n = data.item_count();
            if n != rows * kind.width() {
                return Err(PyValueError::new_err(format!("column {name:?}: {n} bytes, expected {rows} rows of {} bytes", kind.width())));
            }
            if let Some(m) = mask {
                if m.item_count() != rows {
                    return Err(PyValueError::new_err(format!("column {name:?}: mask of {} rows, the column has {rows}", m.item_count())));
                }
            }
        }
        if rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let writer = self.writer.as_mut().ok_or_else(|| PyValueError::new_err(format!("{path}: written after close")))?;
        let mut group = writer.next_row_group().map_err(|e| parquet_err(&path, e))?;
        for (name, kind, data, mask, dict) in &cols {
            let mut cw = group.next_column().map_err(|e| parquet_err(&path, e))?.expect("one column writer per schema field");
            // SAFETY: both buffers were checked C-contiguous, 1-D and of `item_count` bytes, and
            // `cols` holds them (and so the exporting objects' memory) until this loop ends.
            let data = unsafe { as_slice(data) };
            let mask = mask.as_ref().map(|m| unsafe { as_slice(m) });
            write_column(&mut cw, *kind, data, mask, *dict).map_err(|e| match e {
                Bad::Index(i) => PyValueError::new_err(format!("column {name:?}: dictionary index {i} out of range")),
                Bad::Parquet(e) => parquet_err(&path, e),
            })?;
            cw.close().map_err(|e| parquet_err(&path, e))?;
        }
        group.close().map_err(|e| parquet_err(&path, e))?;
        Ok(())
    }

    /// Write the footer and close the file; afterwards `write` and `close` are errors.
    fn close(&mut self) -> PyResult<()> {
        let w = self.writer.take().ok_or_else(|| PyValueError::new_err(format!("{}: closed twice", self.path)))?;
        let file = w.into_inner().map_err(|e| parquet_err(&self.path, e))?;
        file.into_inner().map_err(|e| PyOSError::new_err(format!("{}: {}", self.path, e.error())))?;
        Ok(())
    }
}

/// A 1-D contiguous byte buffer (NumPy: `array.view(np.uint8)`).
fn bytes(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<PyBuffer<u8>> {
    let b = PyBuffer::<u8>::get(obj).map_err(|e| PyValueError::new_err(format!("column {name:?}: not a uint8 buffer ({})", e.value(py))))?;
    if b.dimensions() > 1 || !b.is_c_contiguous() {
        return Err(PyValueError::new_err(format!("column {name:?}: not a 1-D contiguous buffer")));
    }
    Ok(b)
}

/// # Safety
/// `b` must be 1-D and C-contiguous, and must outlive the returned slice.
unsafe fn as_slice(b: &PyBuffer<u8>) -> &[u8] {
    if b.item_count() == 0 {
        return &[];
    }
    std::slice::from_raw_parts(b.buf_ptr() as *const u8, b.item_count())
}

enum Bad {
    Index(i32),
    Parquet(ParquetError),
}

impl From<ParquetError> for Bad {
    fn from(e: ParquetError) -> Self {
        Bad::Parquet(e)
    }
}

/// One column chunk: definition level 1 for a value, 0 for a null (then no value is stored).
fn write_column(cw: &mut SerializedColumnWriter<'_>, kind: Kind, data: &[u8], mask: Option<&[u8]>, dict: Option<&[String]>) -> Result<(), Bad> {
    let rows = data.len() / kind.width();
    let def: Vec<i16> = match mask {
        Some(m) => m.iter().map(|&null| i16::from(null == 0)).collect(),
        None => vec![1; rows],
    };
    fn vals<const W: usize, T>(data: &[u8], def: &[i16], f: impl Fn([u8; W]) -> T) -> Vec<T> {
        data.chunks_exact(W).zip(def).filter(|(_, &d)| d == 1).map(|(c, _)| f(c.try_into().expect("chunks of W bytes"))).collect()
    }
    fn put<T: DataType>(cw: &mut SerializedColumnWriter<'_>, v: &[T::T], def: &[i16]) -> Result<(), Bad> {
        cw.typed::<T>().write_batch(v, Some(def), None)?;
        Ok(())
    }
    // unsigned values keep their bits in the signed physical type (`as` on equal widths)
    match kind {
        Kind::U8 => put::<Int32Type>(cw, &vals(data, &def, |b: [u8; 1]| i32::from(b[0])), &def),
        Kind::I8 => put::<Int32Type>(cw, &vals(data, &def, |b: [u8; 1]| i32::from(b[0] as i8)), &def),
        Kind::U16 => put::<Int32Type>(cw, &vals(data, &def, |b| i32::from(u16::from_le_bytes(b))), &def),
        Kind::I16 => put::<Int32Type>(cw, &vals(data, &def, |b| i32::from(i16::from_le_bytes(b))), &def),
        Kind::U32 => put::<Int32Type>(cw, &vals(data, &def, |b| u32::from_le_bytes(b) as i32), &def),
        Kind::I32 => put::<Int32Type>(cw, &vals(data, &def, i32::from_le_bytes), &def),
        Kind::U64 => put::<Int64Type>(cw, &vals(data, &def, |b| u64::from_le_bytes(b) as i64), &def),
        Kind::I64 => put::<Int64Type>(cw, &vals(data, &def, i64::from_le_bytes), &def),
        Kind::F32 => put::<FloatType>(cw, &vals(data, &def, f32::from_le_bytes), &def),
        Kind::F64 => put::<DoubleType>(cw, &vals(data, &def, f64::from_le_bytes), &def),
        Kind::Bool => put::<BoolType>(cw, &vals(data, &def, |b: [u8; 1]| b[0] != 0), &def),
        Kind::Str => {
            let words: Vec<ByteArray> = dict.unwrap_or_default().iter().map(|s| ByteArray::from(s.as_bytes().to_vec())).collect();
            let mut v = Vec::with_capacity(rows);
            for i in vals(data, &def, i32::from_le_bytes) {
                // a ByteArray clone shares its bytes (a reference count), so each row costs no copy
                v.push(usize::try_from(i).ok().and_then(|u| words.get(u)).ok_or(Bad::Index(i))?.clone());
            }
            put::<ByteArrayType>(cw, &v, &def)
        }
    }
}
