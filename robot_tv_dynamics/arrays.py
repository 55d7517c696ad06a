"""Array helpers shared by every module: the float array type, input checks, read-only views.

Nothing here knows about robots; it is what the rest of the package builds on.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError

#: A float64 ndarray (every numeric array the package hands out).
Array = npt.NDArray[np.float64]
ArrayT = TypeVar("ArrayT", bound=npt.NDArray[Any])


#: Up to this many entries :func:`check_finite` tests each entry; larger arrays first
#: test the sum of squares (no temporary), then each entry only if that overflowed.
_SMALL = 1024
_FLOAT64 = np.dtype(np.float64)
_isfinite = np.isfinite


def check_finite(value: npt.ArrayLike, argument: str, shape: tuple[int | None, ...]) -> Array:
    """Return ``value`` as a float array after checking its shape and finiteness.

    Args:
        value: the array-like to check.
        argument: its name, used in the error message.
        shape: the expected shape; ``None`` matches any length on that axis.

    Returns:
        The value as a float64 ndarray (a copy only where a conversion was needed).

    Raises:
        InvalidInputError: wrong shape, or NaN/Inf entries.
    """
    if (value.__class__ is np.ndarray and value.shape == shape
            and value.dtype == _FLOAT64 and value.size <= _SMALL
            and _isfinite(value).all()):  # the per-sample case: nothing to convert
        return value
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InvalidInputError(argument, f"not numeric ({error})") from None
    if array.shape != shape and (array.ndim != len(shape) or any(
        want is not None and have != want for have, want in zip(array.shape, shape, strict=True)
    )):
        expected = "(" + ", ".join("N" if s is None else str(s) for s in shape)
        expected += ",)" if len(shape) == 1 else ")"
        raise InvalidInputError(argument, f"expected shape {expected}, got {array.shape}")
    flat = array.reshape(-1)
    if flat.size <= _SMALL:  # a per-sample vector or Θ: one ufunc, no error-state switch
        finite = bool(np.isfinite(flat).all())
    else:
        with np.errstate(over="ignore"):  # 1e308 is finite: its square overflowing is no error
            square = flat @ flat
        finite = bool(np.isfinite(square)) or bool(np.all(np.isfinite(array)))
    if not finite:
        bad = np.argwhere(~np.isfinite(array))[0]
        raise InvalidInputError(argument, f"non-finite entry at index {tuple(bad.tolist())}")
    return array


def readonly(array: ArrayT) -> ArrayT:
    """``array`` itself, made read-only (state handed out must not be changed in place)."""
    array.setflags(write=False)
    return array


def frozen_copy(value: npt.ArrayLike) -> Array:
    """A read-only float64 copy of ``value`` (for records that must not share buffers)."""
    return readonly(np.array(value, dtype=np.float64))


def skew(x: npt.ArrayLike) -> Array:
    """Cross-product matrix S(x) of eq. (4), with S(x) y = x × y; stacks over leading axes."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -x[..., 2], x[..., 1]
    out[..., 1, 0], out[..., 1, 2] = x[..., 2], -x[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -x[..., 1], x[..., 0]
    return out
