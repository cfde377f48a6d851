"""The process-wide SM cap, as DeepGEMM's set_num_sms()/get_num_sms(): every later call passes it
as MqaLogitsOptions::num_sms, which the persistent sm_90a kernels honour (the others launch one
block per unit and are not capped)."""

import operator

from . import _mqajit
from ._tuning import _live_ordinal


def _live_cu_num(function_name):
    status = _mqajit.runtime_status()
    if not status["gpu_available"]:
        raise RuntimeError(f"mqajit.{function_name}: no GPU here to count SMs on (runtime: {status['message']})")
    return _mqajit.device_info(_live_ordinal())["cu_num"]


def set_num_sms(num_sms):
    """Caps every later call at `num_sms` multiprocessors; 0 lifts the cap. ValueError for a
    negative count or, where a GPU is present, more than the current device has."""
    num_sms = operator.index(num_sms)
    if num_sms < 0:
        raise ValueError(f"num_sms is {num_sms}; pass 0 (all) or a positive count")
    if num_sms > 0 and _mqajit.runtime_status()["gpu_available"]:
        cu_num = _live_cu_num("set_num_sms")
        if num_sms > cu_num:
            raise ValueError(f"num_sms is {num_sms} but the current device has {cu_num} SMs")
    _mqajit.set_num_sms_setting(num_sms)


def get_num_sms():
    """The SM count calls may use: the cap, or the current device's count when there is none
    (RuntimeError when there is no GPU to count)."""
    return _mqajit.num_sms_setting() or _live_cu_num("get_num_sms")
